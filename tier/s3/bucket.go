package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Config says where a bucket is and how to reach it.
type Config struct {
	// Endpoint is the server's base URL, e.g. "http://127.0.0.1:8333".
	// Empty means AWS's own endpoint for Region.
	Endpoint string
	// Region is the signing region; "us-east-1" when empty.
	Region string
	// Bucket is the bucket's name.
	Bucket string
	// AccessKey and SecretKey sign the requests; both empty means
	// anonymous (unsigned) requests.
	AccessKey, SecretKey string
	// VirtualHosted addresses the bucket as <bucket>.<host> instead of
	// <host>/<bucket>. Off by default: SeaweedFS, MinIO and other servers
	// on an IP address need path-style addressing.
	VirtualHosted bool
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client
}

// Bucket is an object store over one S3 bucket: put, get, ranged get,
// delete and list. Its methods may be called concurrently.
type Bucket struct {
	client   *awss3.Client
	name     string
	pageSize int32 // MaxKeys of a listing; 0 is the server's (1,000)
}

// Object is one listed object.
type Object struct {
	Key  string
	Size int64
}

// Errors.
var (
	// ErrNotFound is matched by a *NotFoundError.
	ErrNotFound = errors.New("s3: object not found")
	// ErrRange is returned for a range outside the object, or when the
	// server answered a ranged GET with other bytes than those asked.
	ErrRange = errors.New("s3: bad range")
)

// NotFoundError is returned when an object does not exist. It matches
// both ErrNotFound and fs.ErrNotExist with errors.Is.
type NotFoundError struct {
	Bucket, Key string
	Err         error // the server's answer
}

func (e *NotFoundError) Error() string {
	return "s3: object not found: s3://" + e.Bucket + "/" + e.Key
}

// Unwrap returns the server's error.
func (e *NotFoundError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) and errors.Is(err, fs.ErrNotExist)
// true.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrNotFound || target == fs.ErrNotExist
}

// NewBucket returns the bucket c names. It makes no request.
func NewBucket(c Config) (*Bucket, error) {
	if c.Bucket == "" {
		return nil, errors.New("s3: no bucket name")
	}
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if c.AccessKey != "" || c.SecretKey != "" {
		v := aws.Credentials{AccessKeyID: c.AccessKey, SecretAccessKey: c.SecretKey, Source: "segkit"}
		creds = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return v, nil })
	}
	cfg := aws.Config{Region: region, Credentials: creds}
	if c.HTTPClient != nil {
		cfg.HTTPClient = c.HTTPClient
	}
	client := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = !c.VirtualHosted
		// The SDK's default CRC32 trailers (aws-chunked uploads) are not
		// understood by every S3-compatible server; SigV4's payload hash
		// already protects the body.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &Bucket{client: client, name: c.Bucket}, nil
}

// Name is the bucket's name.
func (b *Bucket) Name() string { return b.name }

// URL is "s3://<bucket>/<key>", for messages.
func (b *Bucket) URL(key string) string { return "s3://" + b.name + "/" + key }

// CreateBucket creates the bucket; one that exists and is ours is not an
// error.
func (b *Bucket) CreateBucket(ctx context.Context) error {
	_, err := b.client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b.name)})
	if code := apiCode(err); code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("s3: creating bucket %s: %w", b.name, err)
	}
	return nil
}

// Put stores the size bytes of r under key, replacing any object there.
// When it returns nil the object is stored whole (S3's PUT is atomic).
func (b *Bucket) Put(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	_, err := b.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket:        aws.String(b.name),
		Key:           aws.String(key),
		Body:          io.NewSectionReader(r, 0, size), // seekable: signed without a second copy
		ContentLength: aws.Int64(size),
	})
	if err != nil {
		return fmt.Errorf("s3: put %s: %w", b.URL(key), err)
	}
	return nil
}

// PutBytes stores p under key.
func (b *Bucket) PutBytes(ctx context.Context, key string, p []byte) error {
	return b.Put(ctx, key, bytes.NewReader(p), int64(len(p)))
}

// Get returns the object's bytes as a stream. A missing object is a
// *NotFoundError. The caller must Close the reader.
func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := b.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return nil, b.wrap("get", key, err)
	}
	return out.Body, nil
}

// ReadAll returns the object's bytes, at most limit of them: a larger
// object is an error wrapping ErrRange.
func (b *Bucket) ReadAll(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, err := b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	p, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("s3: get %s: %w", b.URL(key), err)
	}
	if int64(len(p)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrRange, b.URL(key), limit)
	}
	return p, nil
}

// GetRange returns the bytes [start, end) of the object as a stream that
// yields no more than end-start bytes; end < 0 or past the object's end
// means to the end. start may equal the object's size (an empty stream);
// a start past it, or start > end, is an error wrapping ErrRange. A
// missing object is a *NotFoundError. The caller must Close the reader.
func (b *Bucket) GetRange(ctx context.Context, key string, start, end int64) (io.ReadCloser, error) {
	if start < 0 || (end >= 0 && start > end) {
		return nil, fmt.Errorf("%w: [%d, %d) of %s", ErrRange, start, end, b.URL(key))
	}
	if end >= 0 && start == end {
		// HTTP cannot ask for no bytes; check that the object exists and
		// is long enough.
		size, err := b.Size(ctx, key)
		if err != nil {
			return nil, err
		}
		if start > size {
			return nil, fmt.Errorf("%w: [%d, %d) outside the %d bytes of %s", ErrRange, start, end, size, b.URL(key))
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	rng := "bytes=" + strconv.FormatInt(start, 10) + "-"
	if end >= 0 {
		rng += strconv.FormatInt(end-1, 10)
	}
	out, err := b.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key), Range: aws.String(rng)})
	if err != nil {
		if httpStatus(err) == http.StatusRequestedRangeNotSatisfiable {
			// start is at or past the end: at the end is an empty read.
			size, serr := b.Size(ctx, key)
			if serr != nil {
				return nil, serr
			}
			if start == size {
				return io.NopCloser(strings.NewReader("")), nil
			}
			return nil, fmt.Errorf("%w: [%d, %d) outside the %d bytes of %s", ErrRange, start, end, size, b.URL(key))
		}
		return nil, b.wrap("get", key, err)
	}
	// A server that ignores Range answers 200 with the whole object:
	// accept that only when the whole object is what was asked.
	got := int64(0)
	if out.ContentRange != nil {
		var ok bool
		if got, ok = contentRangeStart(*out.ContentRange); !ok {
			out.Body.Close()
			return nil, fmt.Errorf("%w: %s answered Content-Range %q for %s", ErrRange, b.URL(key), *out.ContentRange, rng)
		}
	}
	if got != start {
		out.Body.Close()
		return nil, fmt.Errorf("%w: %s answered from byte %d for %s", ErrRange, b.URL(key), got, rng)
	}
	if end < 0 {
		return out.Body, nil
	}
	return limitedBody{io.LimitReader(out.Body, end-start), out.Body}, nil
}

type limitedBody struct {
	io.Reader
	c io.Closer
}

func (l limitedBody) Close() error { return l.c.Close() }

// contentRangeStart parses the first byte of "bytes a-b/size".
func contentRangeStart(s string) (int64, bool) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, false
	}
	a, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(a, 10, 64)
	return n, err == nil && n >= 0
}

// Size returns the object's size. A missing object is a *NotFoundError.
func (b *Bucket) Size(ctx context.Context, key string) (int64, error) {
	out, err := b.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return 0, b.wrap("head", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

// Delete removes the object. A missing object is not an error.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		if err = b.wrap("delete", key, err); errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// List returns every object whose key starts with prefix, in key order.
func (b *Bucket) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)}
	if b.pageSize > 0 {
		in.MaxKeys = aws.Int32(b.pageSize)
	}
	p := awss3.NewListObjectsV2Paginator(b.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3: list %s: %w", b.URL(prefix), err)
		}
		for _, o := range page.Contents {
			out = append(out, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// wrap turns the SDK's answer for a missing key into a *NotFoundError.
func (b *Bucket) wrap(op, key string, err error) error {
	code := apiCode(err)
	if code == "NoSuchKey" || code == "NotFound" || (code != "NoSuchBucket" && httpStatus(err) == http.StatusNotFound) {
		return &NotFoundError{Bucket: b.name, Key: key, Err: err}
	}
	return fmt.Errorf("s3: %s %s: %w", op, b.URL(key), err)
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
