package s3

// SetListPageSize makes b list n keys a page, so that tests page.
func SetListPageSize(b *Bucket, n int32) { b.pageSize = n }
