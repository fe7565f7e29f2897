#include "textflag.h"

// func addF32AVX2(dst, src *float32, n int) int
// Adds 32 (then 8) floats per iteration with AVX2; returns the element
// count left for the Go tail loop (< 8).
TEXT ·addF32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VADDPS  (SI), Y0, Y0
	VADDPS  32(SI), Y1, Y1
	VADDPS  64(SI), Y2, Y2
	VADDPS  96(SI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, SI
	SUBQ    $32, CX
	JMP     loop32

loop8:
	CMPQ CX, $8
	JL   done
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     loop8

done:
	VZEROUPPER
	MOVQ CX, ret+24(FP)
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func accF16F16C(dst *float32, src *uint16, n int, first bool) int
// Converts 8 halfs per instruction (F16C) and stores or adds them.
TEXT ·accF16F16C(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVBLZX first+24(FP), AX
	TESTL   AX, AX
	JNZ     f16conv

f16add:
	CMPQ      CX, $8
	JL        f16done
	VCVTPH2PS (SI), Y1
	VADDPS    (DI), Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       f16add

f16conv:
	CMPQ      CX, $8
	JL        f16done
	VCVTPH2PS (SI), Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       f16conv

f16done:
	VZEROUPPER
	MOVQ CX, ret+32(FP)
	RET

// func accBF16AVX2(dst *float32, src *uint16, n int, first bool) int
// Widens 8 bfloat16s to float32 (zero-extend, shift left 16) and stores or
// adds them.
TEXT ·accBF16AVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVBLZX first+24(FP), AX
	TESTL   AX, AX
	JNZ     bfconv

bfadd:
	CMPQ      CX, $8
	JL        bfdone
	VPMOVZXWD (SI), Y1
	VPSLLD    $16, Y1, Y1
	VADDPS    (DI), Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       bfadd

bfconv:
	CMPQ      CX, $8
	JL        bfdone
	VPMOVZXWD (SI), Y1
	VPSLLD    $16, Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       bfconv

bfdone:
	VZEROUPPER
	MOVQ CX, ret+32(FP)
	RET
