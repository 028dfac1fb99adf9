package config

import (
	"math"
	"strconv"
	"strings"
)

// javaTrim is String.trim: it removes leading and trailing characters
// <= ' ' (space and ASCII control characters), not Unicode spaces.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// splitList is ConfigDef's LIST parsing: split on commas with any
// whitespace around them, keeping empty elements (split(regex, -1)).
func splitList(s string) []string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimFunc(p, isJavaSpace)
	}
	return parts
}

// isJavaSpace is the regex class \s: [ \t\n\x0B\f\r].
func isJavaSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
}

// parseJavaDouble parses the decimal forms of Double.parseDouble:
// an optional sign, digits with an optional point and exponent, an
// optional d/D/f/F suffix, or "Infinity". NaN is refused (see the
// package doc), and so are Go-only spellings ("inf", "0x1p3", "1_0").
func parseJavaDouble(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	if body == "Infinity" {
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) {
		s, body = s[:n-1], body[:len(body)-1]
	}
	if body == "" {
		return 0, false
	}
	digits := false
	for _, r := range body {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-':
		default:
			return 0, false
		}
	}
	if !digits {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true // out-of-range values become ±Inf or 0, as in Java
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaDouble formats f as Double.toString does: "0.5", "2.0", "1.0E7",
// "1.0E-4", with the shortest digits that read back as f.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	if f >= 1e-3 && f < 1e7 {
		if x < 0 {
			return sign + "0." + strings.Repeat("0", -x-1) + digits
		}
		for len(digits) < x+1 {
			digits += "0"
		}
		frac := digits[x+1:]
		if frac == "" {
			frac = "0"
		}
		return sign + digits[:x+1] + "." + frac
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(x)
}
