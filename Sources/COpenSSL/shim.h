#ifndef KEYSMITH_COPENSSL_SHIM_H
#define KEYSMITH_COPENSSL_SHIM_H
// libcrypto (OpenSSL 3), for the Secret Service's dh-ietf1024-sha256-aes128-cbc-pkcs7 session:
// the Diffie-Hellman group's arithmetic, HKDF-SHA256 and AES-128-CBC. Only keysmith-secret-service
// links it.
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#endif
