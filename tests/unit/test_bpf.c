/*
 * test_bpf.c - seccomp filters with named labels (src/exec/bpf.c): the
 * jumps land where the labels are, in the kernel as on paper, and a filter
 * that cannot be right (a backward or undefined label, no room, no final
 * return) is refused rather than half-built.
 */
#include "agconfig.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "exec/bpf.h"

enum { NEXT = AG_BPF_NEXT, ALLOW, DENY, OTHER };

static void
offsets_are_resolved(void **state)
{
	struct ag_bpf b;
	struct sock_fprog p;

	(void)state;
	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_NR);			/* 0 */
	ag_bpf_jeq(&b, 1, DENY, NEXT);			/* 1: -> 5 */
	ag_bpf_jeq(&b, 2, OTHER, ALLOW);		/* 2: -> 6, 4 */
	ag_bpf_and(&b, 0xf);				/* 3 */
	ag_bpf_label(&b, ALLOW);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);		/* 4 */
	ag_bpf_label(&b, DENY);
	ag_bpf_ret(&b, SECCOMP_RET_ERRNO | EPERM);	/* 5 */
	ag_bpf_label(&b, OTHER);
	ag_bpf_ret(&b, SECCOMP_RET_ERRNO | EACCES);	/* 6 */
	assert_int_equal(ag_bpf_finish(&b, &p), 0);
	assert_int_equal(p.len, 7);
	assert_int_equal(p.filter[1].jt, 3);
	assert_int_equal(p.filter[1].jf, 0);
	assert_int_equal(p.filter[2].jt, 3);
	assert_int_equal(p.filter[2].jf, 1);
}

static void
wrong_filters_are_refused(void **state)
{
	struct ag_bpf b;
	struct sock_fprog p;
	int i;

	(void)state;
	/* a label before its jump: classic BPF jumps forward only */
	ag_bpf_init(&b);
	ag_bpf_label(&b, ALLOW);
	ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_jeq(&b, 1, ALLOW, NEXT);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
	/* a label never defined */
	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_jeq(&b, 1, DENY, NEXT);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
	/* a label defined twice */
	ag_bpf_init(&b);
	ag_bpf_label(&b, ALLOW);
	ag_bpf_label(&b, ALLOW);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
	/* falling off the end */
	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_NR);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
	/* a label after the last instruction */
	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_jeq(&b, 1, DENY, NEXT);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	ag_bpf_label(&b, DENY);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
	/* out of room */
	ag_bpf_init(&b);
	for (i = 0; i < AG_BPF_MAX + 1; i++)
		ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	assert_int_equal(ag_bpf_finish(&b, &p), -1);
}

/* In a child: the filter above with getppid's number, then getppid(). */
static int
run_filtered(uint32_t nr_denied, uint32_t nr_other)
{
	struct ag_bpf b;
	struct sock_fprog p;
	pid_t pid;
	int st;

	ag_bpf_init(&b);
	ag_bpf_ld(&b, AG_BPF_NR);
	ag_bpf_jeq(&b, nr_denied, DENY, NEXT);
	ag_bpf_jeq(&b, nr_other, OTHER, ALLOW);
	ag_bpf_label(&b, ALLOW);
	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
	ag_bpf_label(&b, DENY);
	ag_bpf_ret(&b, SECCOMP_RET_ERRNO | EPERM);
	ag_bpf_label(&b, OTHER);
	ag_bpf_ret(&b, SECCOMP_RET_ERRNO | EACCES);
	if (ag_bpf_finish(&b, &p) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		long r;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0) < 0)
			_exit(99);
		r = syscall(SYS_getppid);
		_exit(r >= 0 ? 0 : errno == EPERM ? 1 : errno == EACCES ? 2 : 3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void
the_kernel_follows_the_labels(void **state)
{
	(void)state;
	/* valgrind (3.19) cannot run a seccomp filter; the layout is still
	 * checked on paper by the tests above. */
	if (RUNNING_ON_VALGRIND)
		skip();
	assert_int_equal(run_filtered(SYS_getppid, SYS_getpid), 1);	/* DENY */
	assert_int_equal(run_filtered(SYS_getpid, SYS_getppid), 2);	/* OTHER */
	assert_int_equal(run_filtered(SYS_getpid, SYS_gettid), 0);	/* ALLOW */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offsets_are_resolved),
		cmocka_unit_test(wrong_filters_are_refused),
		cmocka_unit_test(the_kernel_follows_the_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
