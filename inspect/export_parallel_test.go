package inspect

// SetGroups sets the bounds of the groups of entries a worker's decoders
// decode (readParallel), and returns a function that restores them.
func SetGroups(bytes, entries, perDecoder int) (restore func()) {
	b, e, p := groupBytes, groupEntries, groupsPerDecoder
	groupBytes, groupEntries, groupsPerDecoder = bytes, entries, perDecoder
	return func() { groupBytes, groupEntries, groupsPerDecoder = b, e, p }
}
