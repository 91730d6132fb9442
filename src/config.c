/* config.c - being written */
#include "agconfig.h"
