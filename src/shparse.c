/* shparse.c - being written */
#include "agconfig.h"
