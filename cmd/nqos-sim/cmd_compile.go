package main

import (
	"context"
	"errors"
)

func runCompile(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}
