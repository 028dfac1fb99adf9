//go:build amd64 && !purego

package cpu

func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)
func xgetbv0() (eax uint32)

var (
	maxLeaf, _, _, _ = cpuid(0)
	eax1, _, ecx1, _ = cpuid(1)
	// Leaf 7, if the CPU has it: past its highest leaf CPUID answers with
	// another leaf's registers.
	ebx7, ecx7 = func() (uint32, uint32) {
		if maxLeaf < 7 {
			return 0, 0
		}
		_, ebx, ecx, _ := cpuid(7)
		return ebx, ecx
	}()
	// xcr0 is XCR0, or 0 where the OS has not enabled XSAVE (CPUID.1:ECX
	// bit 27), so that no state reads as saved.
	xcr0 = func() uint32 {
		if ecx1&(1<<27) == 0 {
			return 0
		}
		return xgetbv0()
	}()
	ymm = xcr0&0x6 == 0x6   // XMM and YMM state
	zmm = xcr0&0xe6 == 0xe6 // and the opmask and ZMM state
)

// PCLMULQDQ reports PCLMULQDQ (CPUID.1:ECX bit 1) with SSE4.1 (bit 19).
func PCLMULQDQ() bool { return ecx1&(1<<1) != 0 && ecx1&(1<<19) != 0 }

// VPCLMULQDQ reports VPCLMULQDQ (CPUID.7:ECX bit 10).
func VPCLMULQDQ() bool { return ecx7&(1<<10) != 0 }

// AVX2 reports AVX (CPUID.1:ECX bit 28) and AVX2 (CPUID.7:EBX bit 5), the
// YMM state saved.
func AVX2() bool { return ymm && ecx1&(1<<28) != 0 && ebx7&(1<<5) != 0 }

// AVX512F reports AVX-512F (CPUID.7:EBX bit 16), the ZMM state saved.
func AVX512F() bool { return zmm && ebx7&(1<<16) != 0 }

// AMDFamily returns the CPU's family (with the extended family added, as
// AMD counts: 0x19 is Zen 3 and Zen 4) on AMD's CPUs, and 0 on others.
func AMDFamily() uint32 {
	_, ebx, ecx, edx := cpuid(0)
	if ebx != 0x68747541 || edx != 0x69746e65 || ecx != 0x444d4163 { // "AuthenticAMD"
		return 0
	}
	family := eax1 >> 8 & 0xf
	if family == 0xf {
		family += eax1 >> 20 & 0xff
	}
	return family
}
