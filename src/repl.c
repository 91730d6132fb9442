/* repl.c - being written */
#include "agconfig.h"
