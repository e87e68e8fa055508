package main

import (
	"context"
	"errors"
)

func runController(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}
