#ifndef KEYSMITH_CPAM_SHIM_H
#define KEYSMITH_CPAM_SHIM_H
// Linux-PAM, for checking the user's login password (pam_start_confdir needs Linux-PAM 1.4).
#include <security/pam_appl.h>
#endif
