//go:build linux && amd64

#include "textflag.h"

// CALL_FRAME calls the C function of the callFrame at BX with words 0–5 of its arguments in
// the System V integer argument registers (the caller has put any later words on the stack).
// AL is zeroed: no vector registers carry arguments.
#define CALL_FRAME \
	MOVQ 8(BX), DI; \
	MOVQ 16(BX), SI; \
	MOVQ 24(BX), DX; \
	MOVQ 32(BX), CX; \
	MOVQ 40(BX), R8; \
	MOVQ 48(BX), R9; \
	MOVQ 0(BX), R10; \
	XORL AX, AX; \
	CALL R10

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
	CALL_FRAME
	MOVQ  AX, 104(BX)
	ADDQ  $56, SP
	POPQ  BX
	POPQ  BP
	RET

GLOBL ·ffiTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·ffiTrampolineABI0(SB)/8, $ffiTrampoline<>(SB)

// ffiRepeatTrampoline calls the C function of a callFrame w[6] times with words 0–5 of its
// arguments, and stops at the first call whose 32-bit result is not zero: w[7] gets the
// number of calls that returned zero, and the frame's result the first one that did not (or
// zero). Only register arguments repeat: a call of more than six words is not a repeat.
// Entered as ffiTrampoline is, so the stack pointer is 8 mod 16 here.
TEXT ffiRepeatTrampoline<>(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BP
	MOVQ  SP, BP
	PUSHQ BX                 // callee-saved: the frame
	PUSHQ R12                // callee-saved: the count of calls made; 16-byte alignment
	MOVQ  DI, BX
	XORL  R12, R12
	MOVQ  $0, 104(BX)
repeat:
	CMPQ  R12, 56(BX)        // w[6]: the calls to make
	JCC   done               // unsigned R12 >= w[6]
	CALL_FRAME
	TESTL AX, AX
	JNE   refused
	INCQ  R12
	JMP   repeat
refused:
	MOVQ  AX, 104(BX)
done:
	MOVQ  R12, 64(BX)        // w[7]: the calls that returned zero
	POPQ  R12
	POPQ  BX
	POPQ  BP
	RET

GLOBL ·ffiRepeatTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·ffiRepeatTrampolineABI0(SB)/8, $ffiRepeatTrampoline<>(SB)
