/*
 * bpf.h - seccomp filters written with named labels instead of counted
 * jump offsets.
 *
 * A filter is built instruction by instruction into a fixed buffer (no
 * allocation, so a child between fork and exec may build one too); a jump
 * names the label it goes to, or AG_BPF_NEXT for the next instruction, and
 * ag_bpf_finish() resolves the offsets.  Classic BPF only jumps forward and
 * at most 255 instructions: a label defined before its jump, or too far,
 * makes ag_bpf_finish() fail, as does running out of room.
 *
 *	enum { NEXT = AG_BPF_NEXT, ALLOW, NOTIFY };
 *	ag_bpf_ld(&b, AG_BPF_NR);
 *	ag_bpf_jeq(&b, SYS_execve, NOTIFY, ALLOW);
 *	ag_bpf_label(&b, ALLOW);
 *	ag_bpf_ret(&b, SECCOMP_RET_ALLOW);
 *	...
 */
#ifndef AG_BPF_H
#define AG_BPF_H

#include <stddef.h>
#include <stdint.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define AG_AUDIT_ARCH	AUDIT_ARCH_X86_64
#define AG_X32_BIT	0x40000000U	/* x32 syscalls share the arch: told by this bit */
#elif defined(__aarch64__)
#define AG_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#endif

#define AG_BPF_MAX	64		/* instructions */
#define AG_BPF_LABELS	32
#define AG_BPF_NEXT	0		/* "the next instruction", as a jump target */

/* What ag_bpf_ld() loads from struct seccomp_data. */
#define AG_BPF_ARCH	offsetof(struct seccomp_data, arch)
#define AG_BPF_NR	offsetof(struct seccomp_data, nr)
/* An argument's low 32 bits (both supported arches are little-endian). */
#define AG_BPF_ARG(n)	offsetof(struct seccomp_data, args[n])

struct ag_bpf {
	struct sock_filter	insn[AG_BPF_MAX];
	unsigned char		jt[AG_BPF_MAX], jf[AG_BPF_MAX];	/* labels, until finish */
	int			at[AG_BPF_LABELS];		/* where each label is, or -1 */
	unsigned		n;
	int			bad;		/* out of room, or a label used twice */
};

void	ag_bpf_init(struct ag_bpf *b);
void	ag_bpf_label(struct ag_bpf *b, int label);
void	ag_bpf_ld(struct ag_bpf *b, uint32_t offset);
void	ag_bpf_and(struct ag_bpf *b, uint32_t k);
void	ag_bpf_jeq(struct ag_bpf *b, uint32_t k, int if_true, int if_false);
void	ag_bpf_jge(struct ag_bpf *b, uint32_t k, int if_true, int if_false);
void	ag_bpf_jset(struct ag_bpf *b, uint32_t k, int if_true, int if_false);
void	ag_bpf_ret(struct ag_bpf *b, uint32_t action);

/* Resolve the jumps; prog then points into b.  0, or -1 (see above). */
int	ag_bpf_finish(struct ag_bpf *b, struct sock_fprog *prog);

#endif
