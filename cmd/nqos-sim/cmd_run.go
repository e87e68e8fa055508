package main

import (
	"context"
	"errors"
)

func runScenarios(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}
