// Declarations only (include/CFoundationDictionary.h): the functions are Foundation's.
#include "CFoundationDictionary.h"
