// Package resync walks the valid entries of a .log past damage: after a bad
// entry it finds the next position where an entry with a plausible header
// and a verifying checksum starts (record.Finder), reports the damaged
// region between, and goes on. Verification (inspect) uses it to tell
// corruption from a torn tail; salvage and recover (repair) use it to say
// what a damaged region held and what follows it.
package resync
