;;; autograd-lsp.el --- use autograd-lsp with eglot  -*- lexical-binding: t; -*-

;; Emacs 29+ ships eglot; on Emacs 28 install it from ELPA (elpa-eglot on Debian).
(require 'eglot)

;; One server per major mode: to keep another Python server, see the README.
(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode) . ("autograd-lsp" "serve"
                                                :initializationOptions (:locale "en"))))

;; Answers workspace/configuration for the section "autograd-lsp".
(setq-default eglot-workspace-configuration
              '(:autograd-lsp (:ignore [] :severity (:nonscalar-backward "error"))))

(add-hook 'python-mode-hook #'eglot-ensure)

(provide 'autograd-lsp)
;;; autograd-lsp.el ends here
