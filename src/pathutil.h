#ifndef AG_PATHUTIL_H
#define AG_PATHUTIL_H
#endif
