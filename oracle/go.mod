module github.com/segkit/segkit/oracle

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/segkit/segkit v0.0.0
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kadm v1.20.0
)

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
)

replace github.com/segkit/segkit => ../
