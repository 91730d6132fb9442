/*
 * compat.h - what a libc may lack.  Include after agconfig.h.
 */
#ifndef AG_COMPAT_H
#define AG_COMPAT_H

#include <stddef.h>

#ifndef HAVE_EXPLICIT_BZERO
/* Secrets are wiped with this; the volatile stores keep the compiler from
 * dropping them as dead. */
static inline void
explicit_bzero(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n-- > 0)
		*v++ = 0;
}
#endif

/* memfd_create(2) flag of Linux 6.3; older headers lack it */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif

/*
 * AG_ASAN: 1 in a build with AddressSanitizer (gcc's -fsanitize=address or
 * clang's, the fuzzing build), where a few mechanisms take the plain path
 * the sanitizer can follow.
 */
#if defined(__SANITIZE_ADDRESS__)
#define AG_ASAN		1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_ASAN		1
#endif
#endif
#ifndef AG_ASAN
#define AG_ASAN		0
#endif

#endif
