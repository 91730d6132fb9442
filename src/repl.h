#ifndef AG_REPL_H
#define AG_REPL_H
#endif
