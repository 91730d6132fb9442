#ifndef AG_RUNNER_H
#define AG_RUNNER_H
#endif
