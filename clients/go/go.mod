module github.com/ringd/ringd/clients/go

go 1.22

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/twmb/murmur3 v1.1.8
	github.com/zeebo/xxh3 v1.1.0
)

require (
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
