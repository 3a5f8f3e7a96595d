#ifndef KEYSMITH_CKEYUTILS_SHIM_H
#define KEYSMITH_CKEYUTILS_SHIM_H
// The kernel keyring through libkeyutils' fixed-argument wrappers (the variadic
// syscall() and keyctl() cannot be called from Swift).
#include <keyutils.h>
#endif
