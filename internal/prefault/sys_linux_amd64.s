#include "textflag.h"

// func rawSyscall3(trap, a1, a2, a3 uintptr) uintptr
TEXT ·rawSyscall3(SB),NOSPLIT,$0-40
	MOVQ	a1+8(FP), DI
	MOVQ	a2+16(FP), SI
	MOVQ	a3+24(FP), DX
	MOVQ	trap+0(FP), AX
	SYSCALL
	MOVQ	AX, ret+32(FP)
	RET
