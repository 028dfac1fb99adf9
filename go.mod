module github.com/segkit/segkit

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
)
