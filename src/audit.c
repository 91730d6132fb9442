/* audit.c - being written */
#include "agconfig.h"
