// keysmith-secret-service: `keysmith secret-service` runs this executable, installed beside keysmith.
import KeysmithSecretService

print("keysmith secret-service: not built yet")
