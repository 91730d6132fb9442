#ifndef AG_AUDIT_H
#define AG_AUDIT_H
#endif
