#ifndef AG_PAMAUTH_H
#define AG_PAMAUTH_H
#endif
