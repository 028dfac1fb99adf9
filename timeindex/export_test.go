package timeindex

// HeldBytes returns the bytes of entries x keeps in memory: those up to the
// last non-zero entry, not the zero tail of a preallocated file.
func HeldBytes(x *TimeIndex) int { return len(x.f.View().Data()) }
