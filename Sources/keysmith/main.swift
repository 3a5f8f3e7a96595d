print("keysmith")
