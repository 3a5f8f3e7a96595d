#ifndef KEYSMITH_CSYSTEMDBUS_SHIM_H
#define KEYSMITH_CSYSTEMDBUS_SHIM_H
// sd-bus (libsystemd), the D-Bus client that talks to fprintd. Only its fixed-argument
// calls are used: the variadic ones (sd_bus_call_method, ...) cannot be called from Swift.
#include <systemd/sd-bus.h>
#endif
