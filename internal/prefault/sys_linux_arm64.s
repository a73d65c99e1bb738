#include "textflag.h"

// func rawSyscall3(trap, a1, a2, a3 uintptr) uintptr
TEXT ·rawSyscall3(SB),NOSPLIT,$0-40
	MOVD	a1+8(FP), R0
	MOVD	a2+16(FP), R1
	MOVD	a3+24(FP), R2
	MOVD	trap+0(FP), R8
	SVC
	MOVD	R0, ret+32(FP)
	RET
