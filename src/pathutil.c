/* pathutil.c - being written */
#include "agconfig.h"
