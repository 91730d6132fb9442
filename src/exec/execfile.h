/*
 * execfile.h - the file an exec names, found the way the kernel will find
 * it for the stopped process: its root for absolute names and links, its
 * working directory (or execveat's directory fd) for relative ones, its
 * own /proc/self and /proc/thread-self, and /proc's magic links
 * (/proc/PID/fd/N, /dev/fd/N) through the kernel.
 *
 * Why: a deny rule names a program, and the program is a file: a link
 * named g, /dev/fd/3 or /proc/self/fd/3 of an open /usr/bin/git is git.
 * The exec supervisor (execguard.c) stats what this opens and the judge
 * matches its (device, inode) against the registry's programs; the first
 * bytes of a script are read through the same descriptor, so a script
 * deleted after it was opened, or one the gateway may not read, cannot
 * differ from what the kernel runs.
 *
 * Components are opened one at a time with O_PATH|O_NOFOLLOW beneath a
 * descriptor of the process's root (/proc/TID/root); a link's text is
 * spliced in and an absolute one starts again at that root; ".." never
 * leaves it.  A link in /proc is followed by the kernel (a magic link goes
 * to the object it names); /proc/self and /proc/thread-self are replaced
 * by the process's own numbers in the pid namespace of that /proc, read
 * from /proc/TID/status.  At most 40 links, as the kernel.
 */
#ifndef AG_EXECFILE_H
#define AG_EXECFILE_H

#include <sys/types.h>

/*
 * Open (O_PATH) the file execve(path) or execveat(dirfd, path, flags)
 * would run for thread tid: the descriptor, or -errno (-ENOENT: nothing
 * there, as the kernel would find too).  dirfd is the process's number
 * (AT_FDCWD for its working directory); flags AT_EMPTY_PATH and
 * AT_SYMLINK_NOFOLLOW as execveat's.
 */
int	ag_execfile_open(pid_t tid, int dirfd, const char *path, int flags);

/* Open fd (from ag_execfile_open) for reading: a descriptor, or -errno. */
int	ag_execfile_reopen(int fd);

#endif
