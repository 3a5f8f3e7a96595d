#ifndef KEYSMITH_LOAD_ON_USE_H
#define KEYSMITH_LOAD_ON_USE_H
// Linux-PAM (libpam) and sd-bus (libsystemd) are loaded when an authenticator first calls
// them, not when a program starts: load_on_use_pam.c and load_on_use_sd_bus.c define the
// functions KeychainServices calls (declared by CPAM's and CSystemdBus's headers), and each
// forwards to the library's own, found with dlopen and dlsym on first use. A program that
// never authenticates (a lookup of an item that needs no user presence) starts without
// either library and the dozen libraries behind them.
//
// When a library cannot be loaded, its functions fail as they do for an unavailable
// service: pam_start_confdir returns PAM_ABORT, and the sd-bus calls return -ELIBACC.
#endif
