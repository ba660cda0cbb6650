package findings

// stripANSI appends s to dst without terminal escape sequences: CSI (colours,
// cursor moves), OSC (titles, hyperlinks some tools put around file names)
// and two-byte escapes. A sequence cut off by the end of the line is dropped.
func stripANSI(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != 0x1b {
			dst = append(dst, s[i])
			i++
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case '[':
			i = skipCSI(s, i+1)
		case ']':
			i = skipOSC(s, i+1)
		default:
			i++
		}
	}
	return dst
}

// skipCSI skips parameter and intermediate bytes, then the final byte.
func skipCSI(s []byte, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipOSC skips to the BEL or ESC \ that ends an operating system command.
func skipOSC(s []byte, i int) int {
	for ; i < len(s); i++ {
		if s[i] == 0x07 {
			return i + 1
		}
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
			return i + 2
		}
	}
	return i
}
