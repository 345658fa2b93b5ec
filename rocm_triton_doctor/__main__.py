from __future__ import annotations

from rocm_triton_doctor.cli import main

if __name__ == "__main__":
    main()
