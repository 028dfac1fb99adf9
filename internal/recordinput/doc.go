// Package recordinput is segviz append's input: JSON lines of records,
// parsed with their line numbers and refused line by line
// (RecordReader, ParseRecords), and appended to a partition as a leader
// appends them, in memory bounded by one batch, with what was durably
// appended acknowledged (AppendFrom, Append).
package recordinput
