#ifndef AG_SESSION_H
#define AG_SESSION_H
#endif
