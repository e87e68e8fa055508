package kubeapi

import "path/filepath"

// writeKubeconfig writes the admin kubeconfig next to the server's state.
func (s *Server) writeKubeconfig() error {
	path := filepath.Join(s.dir, "kubeconfig")
	if err := WriteKubeconfig(s.config, path); err != nil {
		return err
	}
	s.kubeconfig = path
	return nil
}
