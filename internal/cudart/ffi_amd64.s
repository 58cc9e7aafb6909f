//go:build linux && amd64

#include "textflag.h"

// ffiTrampoline calls the C function described by a callFrame (see ffi_amd64.go): words 0–5 of
// its arguments go in the System V integer argument registers, words 6–11 on the stack, and
// the function's RAX goes back into the frame. runtime.cgocall runs it on the system stack
// with the C calling convention, so the frame's address arrives in DI and the stack pointer is
// 8 mod 16 here.
TEXT ffiTrampoline<>(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BP
	MOVQ  SP, BP
	PUSHQ BX                 // callee-saved: keeps the frame across the call
	SUBQ  $56, SP            // six stack words, and 16-byte alignment at the CALL
	MOVQ  DI, BX
	MOVQ  56(BX), AX
	MOVQ  AX, 0(SP)
	MOVQ  64(BX), AX
	MOVQ  AX, 8(SP)
	MOVQ  72(BX), AX
	MOVQ  AX, 16(SP)
	MOVQ  80(BX), AX
	MOVQ  AX, 24(SP)
	MOVQ  88(BX), AX
	MOVQ  AX, 32(SP)
	MOVQ  96(BX), AX
	MOVQ  AX, 40(SP)
	MOVQ  8(BX), DI
	MOVQ  16(BX), SI
	MOVQ  24(BX), DX
	MOVQ  32(BX), CX
	MOVQ  40(BX), R8
	MOVQ  48(BX), R9
	MOVQ  0(BX), R10
	XORL  AX, AX             // no vector registers carry arguments
	CALL  R10
	MOVQ  AX, 104(BX)
	ADDQ  $56, SP
	POPQ  BX
	POPQ  BP
	RET

GLOBL ·ffiTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·ffiTrampolineABI0(SB)/8, $ffiTrampoline<>(SB)
