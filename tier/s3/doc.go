// Package s3 is a tiered-storage remote over an S3 bucket: tier.Remote
// (Kafka's RemoteStorageManager and the remote log metadata) and
// tier.Auditor, storing the objects under the names of tier.Dir's
// LocalTieredStorage layout. It is a module of its own
// (github.com/segkit/segkit/tier/s3) so that the core module keeps its
// short dependency list and its WASM builds: the S3 client is
// github.com/aws/aws-sdk-go-v2/service/s3, which with its signing and
// transport modules (all of aws-sdk-go-v2 and smithy-go, no third-party
// code) is what this module adds.
//
//	b, _ := s3.NewBucket(s3.Config{Endpoint: "http://127.0.0.1:8333", Bucket: "tiered",
//		AccessKey: "…", SecretKey: "…"})
//	remote := s3.NewRemote(b, "cluster-a", 0)
//	// or: remote, err := s3.ParseURI("s3://tiered/cluster-a?endpoint=http://127.0.0.1:8333")
//	t, rep, err := tier.Open(fsys, l, remote, tier.Options{})
//	up, err := t.Upload()
//
// # Keys
//
// A Remote with prefix P stores what tier.Dir stores under its directory,
// with P for the directory:
//
//	P/kafka-tiered-storage/<topic>-<partition>-<topicId>/
//	    <20-digit start offset>-<segment uuid>.log
//	    …-<uuid>.index  .timeindex  .txnindex (only when the segment has one)
//	    …-<uuid>.leader_epoch_checkpoint  .snapshot
//	P/.segkit-tier/<topic>-<partition>-<topicId>/
//	    <20-digit start offset>-<segment uuid>.rlsm   one per segment copy
//
// The bytes of each object are those of the file of the same name in a
// tier.Dir (the metadata objects hold tier.AppendMetadata's bytes), so a
// bucket can be copied to a directory, or back, with any S3 tool.
//
// # Consistency and crash safety
//
// A PUT replaces an object atomically and is durable when it returns, so
// there are no temporary objects: a crash during an upload leaves whole
// objects and missing ones, never a torn one, and tier's metadata states
// (COPY_SEGMENT_STARTED before the data, FINISHED after) resolve it on the
// next tier.Open. S3 has been strongly read-after-write consistent since
// December 2020, and so are SeaweedFS and MinIO; on a store that is only
// eventually consistent, a listing could miss a fresh metadata object.
// A segment file is sent with one PUT, which S3 limits to 5 GiB (Kafka's
// segment.bytes is at most 2 GiB).
//
// # Errors
//
// A missing object is a *NotFoundError (matching ErrNotFound and
// fs.ErrNotExist); through Remote it is a *tier.NotFoundError, as from
// tier.Dir. Deleting a missing object is not an error. A range outside an
// object, or a server that answers a ranged GET with other bytes, is an
// error wrapping ErrRange. Damaged metadata objects are
// *format.CorruptionError naming s3://bucket/key.
//
// # Addressing and checksums
//
// Buckets are addressed path-style (http://host/bucket/key) unless
// Config.VirtualHosted is set: S3-compatible servers on an IP address, as
// in the tests, need it. The SDK's default CRC32 trailers (aws-chunked
// uploads) are turned off (RequestChecksumCalculationWhenRequired): SigV4
// already signs the payload's SHA-256, and not every S3-compatible server
// takes the trailers.
//
// # Concurrency
//
// Bucket and Remote methods may be called concurrently. Each Remote call
// runs under a timeout (NewRemote's, DefaultTimeout by default); the
// streams FetchLogSegment and FetchIndex return stay under it until
// closed.
//
// # Tests
//
// The tests run against a real S3-compatible server that they start on
// free ports: the Versity S3 Gateway's posix backend (versitygw, from
// scripts/versitygw.sh install; what CI runs) or SeaweedFS's `weed mini`
// (scripts/seaweedfs.sh install). SEGKIT_S3_SERVER=versitygw or weed picks
// one; unset, versitygw if installed, else weed. Without a server they
// skip; under CI=true they fail.
package s3
