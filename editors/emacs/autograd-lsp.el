;;; autograd-lsp.el --- use autograd-lsp with eglot  -*- lexical-binding: t; -*-

;; Emacs 29+ ships eglot; on Emacs 28 install it from ELPA (elpa-eglot on Debian,
;; or M-x package-install RET eglot).
(require 'eglot)

;; One server per major mode: to keep another Python server, see the README.
;; Options go in :initializationOptions, e.g. (:locale "zh-CN" :ignore ["AG3"]);
;; a value given there replaces the project's [tool.autograd-lsp] for that key,
;; so none is set here.
(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode) . ("autograd-lsp" "serve")))

(add-hook 'python-mode-hook #'eglot-ensure)
;; Emacs 29+ with tree-sitter.
(add-hook 'python-ts-mode-hook #'eglot-ensure)

(provide 'autograd-lsp)
;;; autograd-lsp.el ends here
