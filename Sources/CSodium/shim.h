#ifndef KEYSMITH_CSODIUM_SHIM_H
#define KEYSMITH_CSODIUM_SHIM_H
#include <sodium.h>
#endif
