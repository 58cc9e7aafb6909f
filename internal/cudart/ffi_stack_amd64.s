//go:build linux && amd64

#include "textflag.h"

// ffiStackTrampoline calls the C function of a stackFrame (ffi_stack_amd64.go) with its six
// register words in the System V integer argument registers and its n stack words on the
// stack, first word lowest, and stores RAX in the frame. Entered as ffiTrampoline is (through
// runtime.cgocall, the frame in DI, the stack pointer 8 mod 16).
//
// stackFrame: fn 0, regs 8..48, n 56, words 64, ret 72.
TEXT ffiStackTrampoline<>(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BP
	MOVQ  SP, BP
	PUSHQ BX                 // callee-saved: the frame
	PUSHQ R12                // callee-saved; the stack pointer is now 0 mod 16
	MOVQ  DI, BX
	MOVQ  56(BX), CX         // n
	LEAQ  1(CX), AX
	ANDQ  $-2, AX            // an even number of words keeps 16-byte alignment at the CALL
	SHLQ  $3, AX
	SUBQ  AX, SP
	MOVQ  64(BX), SI
	XORQ  DX, DX
copy:
	CMPQ  DX, CX
	JGE   copied
	MOVQ  (SI)(DX*8), AX
	MOVQ  AX, (SP)(DX*8)
	INCQ  DX
	JMP   copy
copied:
	MOVQ  8(BX), DI
	MOVQ  16(BX), SI
	MOVQ  24(BX), DX
	MOVQ  32(BX), CX
	MOVQ  40(BX), R8
	MOVQ  48(BX), R9
	MOVQ  0(BX), R10
	XORL  AX, AX
	CALL  R10
	MOVQ  AX, 72(BX)
	LEAQ  -16(BP), SP
	POPQ  R12
	POPQ  BX
	POPQ  BP
	RET

GLOBL ·ffiStackTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·ffiStackTrampolineABI0(SB)/8, $ffiStackTrampoline<>(SB)
