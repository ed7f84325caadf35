# Optional baselines for `convtune bench`: oneDNN (libdnnl-dev), OpenBLAS
# (libopenblas-dev), XNNPACK and LIBXSMM, all from Debian. Without them the
# stubs are built and bench says what is missing (cmake/optional.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/optional.cmake)
option(CONVTUNE_WITH_ONEDNN "Build the oneDNN baseline when oneDNN is found" ON)
option(CONVTUNE_WITH_OPENBLAS "Build the im2col+OpenBLAS baseline when OpenBLAS is found" ON)
set(CT_BASELINE_SOURCES src/baselines/layouts.cpp)

if(CONVTUNE_WITH_ONEDNN)
  find_path(CT_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(CT_DNNL_LIBRARY dnnl)
  find_package(OpenMP COMPONENTS CXX)  # oneDNN's Debian build uses OpenMP threads
endif()
ct_optional_dependency(
  GROUP BASELINES LABEL "bench baseline oneDNN" HAVE CONVTUNE_HAVE_DNNL LIST CT_BASELINE_SOURCES
  WHEN CONVTUNE_WITH_ONEDNN AND CT_DNNL_INCLUDE_DIR AND CT_DNNL_LIBRARY AND OpenMP_CXX_FOUND
  SHOW CT_DNNL_LIBRARY INSTALL libdnnl-dev
  SOURCES src/baselines/onednn.cpp MISSING src/baselines/onednn_missing.cpp
  INCLUDES ${CT_DNNL_INCLUDE_DIR} LIBS ${CT_DNNL_LIBRARY} OpenMP::OpenMP_CXX DEFINES CONVTUNE_HAVE_DNNL=1)

if(CONVTUNE_WITH_OPENBLAS)
  pkg_check_modules(CT_OPENBLAS QUIET openblas)
  if(CT_OPENBLAS_FOUND)
    set(CT_OPENBLAS_INCLUDE ${CT_OPENBLAS_INCLUDE_DIRS})
    set(CT_OPENBLAS_LIB ${CT_OPENBLAS_LINK_LIBRARIES})
  else()
    find_library(CT_OPENBLAS_LIB openblas PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial)
    find_path(CT_OPENBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas-pthread openblas openblas-openmp openblas-serial)
  endif()
  if(CT_OPENBLAS_LIB AND CT_OPENBLAS_INCLUDE)  # a netlib cblas.h lacks OpenBLAS's own calls
    include(CheckSymbolExists)
    set(CMAKE_REQUIRED_INCLUDES ${CT_OPENBLAS_INCLUDE})
    set(CMAKE_REQUIRED_LIBRARIES ${CT_OPENBLAS_LIB})
    check_symbol_exists(openblas_get_corename cblas.h CT_OPENBLAS_USABLE)
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_LIBRARIES)
  endif()
endif()
ct_optional_dependency(
  GROUP BASELINES LABEL "bench baseline OpenBLAS" HAVE CONVTUNE_HAVE_OPENBLAS LIST CT_BASELINE_SOURCES
  WHEN CONVTUNE_WITH_OPENBLAS AND CT_OPENBLAS_USABLE
  SHOW CT_OPENBLAS_LIB INSTALL libopenblas-dev
  SOURCES src/baselines/im2col_blas.cpp MISSING src/baselines/im2col_blas_missing.cpp
  INCLUDES ${CT_OPENBLAS_INCLUDE} LIBS ${CT_OPENBLAS_LIB} DEFINES CONVTUNE_HAVE_OPENBLAS=1)

option(CONVTUNE_WITH_XNNPACK "Build the XNNPACK baseline when XNNPACK is found" ON)
if(CONVTUNE_WITH_XNNPACK)
  find_path(CT_XNNPACK_INCLUDE xnnpack.h)
  find_path(CT_PTHREADPOOL_INCLUDE pthreadpool.h)
  find_library(CT_XNNPACK_LIB XNNPACK)
  find_library(CT_PTHREADPOOL_LIB pthreadpool)
endif()
ct_optional_dependency(
  GROUP BASELINES LABEL "bench baseline XNNPACK" HAVE CONVTUNE_HAVE_XNNPACK LIST CT_BASELINE_SOURCES
  WHEN CONVTUNE_WITH_XNNPACK AND CT_XNNPACK_INCLUDE AND CT_PTHREADPOOL_INCLUDE AND CT_XNNPACK_LIB AND CT_PTHREADPOOL_LIB
  SHOW CT_XNNPACK_LIB INSTALL libxnnpack-dev libpthreadpool-dev
  SOURCES src/baselines/xnnpack.cpp MISSING src/baselines/xnnpack_missing.cpp
  INCLUDES ${CT_XNNPACK_INCLUDE} ${CT_PTHREADPOOL_INCLUDE} LIBS ${CT_XNNPACK_LIB} ${CT_PTHREADPOOL_LIB}
  DEFINES CONVTUNE_HAVE_XNNPACK=1)

option(CONVTUNE_WITH_LIBXSMM "Build the LIBXSMM baseline when LIBXSMM is found" ON)
if(CONVTUNE_WITH_LIBXSMM)
  pkg_check_modules(CT_LIBXSMM QUIET libxsmm)  # Debian's libxsmm.pc: the static libxsmm.a in /usr/lib
  # Only the library itself: its other -l flags (pthread, rt, dl, m) come with convtune_core.
  find_library(CT_LIBXSMM_LIB xsmm HINTS ${CT_LIBXSMM_LIBRARY_DIRS})
  find_path(CT_LIBXSMM_INCLUDE libxsmm_dnn_convolution.h HINTS ${CT_LIBXSMM_INCLUDE_DIRS})  # 2.x moved it out
  # Its BLAS fallback wants sgemm_ and friends: OpenBLAS when it is linked, else libxsmm's stubs.
  if(CONVTUNE_HAVE_OPENBLAS)
    set(CT_LIBXSMM_BLAS ${CT_OPENBLAS_LIB})
  else()
    find_library(CT_LIBXSMM_BLAS xsmmnoblas)
  endif()
  find_package(OpenMP COMPONENTS CXX)  # execute_st per thread id in an OpenMP team
endif()
ct_optional_dependency(
  GROUP BASELINES LABEL "bench baseline LIBXSMM" HAVE CONVTUNE_HAVE_LIBXSMM LIST CT_BASELINE_SOURCES
  WHEN CONVTUNE_WITH_LIBXSMM AND CT_LIBXSMM_LIB AND CT_LIBXSMM_BLAS AND CT_LIBXSMM_INCLUDE AND OpenMP_CXX_FOUND
  SHOW CT_LIBXSMM_LIB INSTALL libxsmm-dev
  SOURCES src/baselines/libxsmm.cpp MISSING src/baselines/libxsmm_missing.cpp
  INCLUDES ${CT_LIBXSMM_INCLUDE} LIBS ${CT_LIBXSMM_LIB} ${CT_LIBXSMM_BLAS} OpenMP::OpenMP_CXX
  DEFINES CONVTUNE_HAVE_LIBXSMM=1)

# Links the found baselines into `target` and defines CONVTUNE_HAVE_DNNL,
# _OPENBLAS, _XNNPACK and _LIBXSMM for it and its users.
function(ct_use_baselines target)
  ct_use_optional(${target} BASELINES)
endfunction()
