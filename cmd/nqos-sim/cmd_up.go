package main

import (
	"context"
	"errors"
)

func runUp(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}

func runStatus(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}

func runDown(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}

func runExec(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}
