/* session.c - being written */
#include "agconfig.h"
