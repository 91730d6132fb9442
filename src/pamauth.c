/* pamauth.c - being written */
#include "agconfig.h"
