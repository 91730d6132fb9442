/* envsan.c - being written */
#include "agconfig.h"
