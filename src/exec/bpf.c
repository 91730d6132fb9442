/* bpf.c - seccomp filters with named labels; see bpf.h */
#include "agconfig.h"

#include <string.h>

#include "exec/bpf.h"

void
ag_bpf_init(struct ag_bpf *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < AG_BPF_LABELS; i++)
		b->at[i] = -1;
}

static void
emit(struct ag_bpf *b, uint16_t code, uint32_t k, int jt, int jf)
{
	if (b->n >= AG_BPF_MAX || jt < 0 || jt >= AG_BPF_LABELS || jf < 0 ||
	    jf >= AG_BPF_LABELS) {
		b->bad = 1;
		return;
	}
	b->insn[b->n] = (struct sock_filter){ .code = code, .k = k };
	b->jt[b->n] = (unsigned char)jt;
	b->jf[b->n] = (unsigned char)jf;
	b->n++;
}

void
ag_bpf_label(struct ag_bpf *b, int label)
{
	if (label <= AG_BPF_NEXT || label >= AG_BPF_LABELS || b->at[label] >= 0) {
		b->bad = 1;
		return;
	}
	b->at[label] = (int)b->n;
}

void
ag_bpf_ld(struct ag_bpf *b, uint32_t offset)
{
	emit(b, BPF_LD | BPF_W | BPF_ABS, offset, 0, 0);
}

void
ag_bpf_and(struct ag_bpf *b, uint32_t k)
{
	emit(b, BPF_ALU | BPF_AND | BPF_K, k, 0, 0);
}

void
ag_bpf_jeq(struct ag_bpf *b, uint32_t k, int if_true, int if_false)
{
	emit(b, BPF_JMP | BPF_JEQ | BPF_K, k, if_true, if_false);
}

void
ag_bpf_jge(struct ag_bpf *b, uint32_t k, int if_true, int if_false)
{
	emit(b, BPF_JMP | BPF_JGE | BPF_K, k, if_true, if_false);
}

void
ag_bpf_jset(struct ag_bpf *b, uint32_t k, int if_true, int if_false)
{
	emit(b, BPF_JMP | BPF_JSET | BPF_K, k, if_true, if_false);
}

void
ag_bpf_ret(struct ag_bpf *b, uint32_t action)
{
	emit(b, BPF_RET | BPF_K, action, 0, 0);
}

/* The offset from the jump at i to label (0 for the next instruction). */
static int
offset(const struct ag_bpf *b, unsigned i, int label, uint8_t *out)
{
	int to;

	if (label == AG_BPF_NEXT) {
		*out = 0;
		return 0;
	}
	if ((to = b->at[label]) < 0 || to <= (int)i || to >= (int)b->n || to - (int)i - 1 > 255)
		return -1;	/* undefined, backwards, or too far */
	*out = (uint8_t)(to - (int)i - 1);
	return 0;
}

int
ag_bpf_finish(struct ag_bpf *b, struct sock_fprog *prog)
{
	unsigned i;

	if (b->bad || b->n == 0 || BPF_CLASS(b->insn[b->n - 1].code) != BPF_RET)
		return -1;
	for (i = 0; i < b->n; i++) {
		if (BPF_CLASS(b->insn[i].code) != BPF_JMP)
			continue;
		if (offset(b, i, b->jt[i], &b->insn[i].jt) < 0 ||
		    offset(b, i, b->jf[i], &b->insn[i].jf) < 0)
			return -1;
	}
	prog->len = (unsigned short)b->n;
	prog->filter = b->insn;
	return 0;
}
