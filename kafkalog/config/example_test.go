package config_test

import (
	"fmt"

	"github.com/segkit/segkit/kafkalog/config"
)

func ExampleParse() {
	cfg, err := config.Parse(map[string]string{
		config.SegmentBytes:  "1048576",
		config.RetentionMs:   "-1",
		config.CleanupPolicy: "compact,delete",
	})
	fmt.Println(cfg.SegmentBytes, cfg.RetentionMs, cfg.Compact(), cfg.Delete(), err)

	_, err = config.Parse(map[string]string{config.SegmentBytes: "10"})
	fmt.Println(err)

	cfg, err = config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: "100"})
	fmt.Println(cfg.SegmentBytes, err)

	_, err = config.Parse(map[string]string{"retention.hours": "1"})
	fmt.Println(err)
	// Output:
	// 1048576 -1 true true <nil>
	// Invalid value 10 for configuration segment.bytes: Value must be at least 1048576
	// 100 <nil>
	// Unknown topic config name: retention.hours
}
